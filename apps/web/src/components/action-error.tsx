import type { ReactNode } from "react";
import { createPortal } from "react-dom";

/** The one corner where failed actions are told; created with the first. */
function toastHost(): HTMLElement {
  const found = document.getElementById("action-errors");
  if (found) return found;
  const host = document.createElement("div");
  host.id = "action-errors";
  host.className = "toasts";
  document.body.append(host);
  return host;
}

/**
 * A failed action (Cancel, Relaunch), told at the bottom of the window rather than beside its
 * button: a table row keeps its height, and a long message is read whole, on a phone too.
 */
export function ActionError({
  title,
  message,
  onDismiss,
  children,
}: {
  title: string;
  message: string;
  onDismiss: () => void;
  children?: ReactNode;
}) {
  return createPortal(
    <div className="toast" role="alert">
      <div className="row" style={{ flexWrap: "nowrap", alignItems: "flex-start" }}>
        <strong className="grow">{title}</strong>
        <button type="button" className="small" onClick={onDismiss} aria-label={`Dismiss: ${title}`}>
          ×
        </button>
      </div>
      <p className="message">{message}</p>
      {children}
    </div>,
    toastHost(),
  );
}
