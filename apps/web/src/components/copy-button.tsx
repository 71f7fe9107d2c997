import { useEffect, useState } from "react";

/** Copies text; falls back to selecting a hidden textarea where the Clipboard API is refused (plain http on a LAN name). */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 1800);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button
      type="button"
      className="small"
      onClick={() =>
        copyText(text).then(
          () => setState("copied"),
          () => setState("failed"),
        )
      }
      aria-live="polite"
    >
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : label}
    </button>
  );
}

/** Shows `text` and copies `copy` (the same unless a secret is masked on screen). */
export function CopyBlock({ text, copy = text, label }: { text: string; copy?: string; label: string }) {
  return (
    <div className="copy-block">
      <pre className="block mono" role="group" aria-label={label}>
        {text}
      </pre>
      <CopyButton text={copy} />
    </div>
  );
}
