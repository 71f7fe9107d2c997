import { useEffect, useState } from "react";

export type ThemeChoice = "system" | "light" | "dark";
const KEY = "corral-theme";

function systemDark(): boolean {
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
}

/** Light, dark or the system's, kept in localStorage and applied as `data-theme` on <html>. */
export function useTheme(): [ThemeChoice, (t: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(() => (localStorage.getItem(KEY) as ThemeChoice | null) ?? "system");
  useEffect(() => {
    const apply = () => {
      const dark = choice === "dark" || (choice === "system" && systemDark());
      document.documentElement.dataset.theme = dark ? "dark" : "light";
    };
    apply();
    localStorage.setItem(KEY, choice);
    const media = window.matchMedia?.("(prefers-color-scheme: dark)");
    media?.addEventListener("change", apply);
    return () => media?.removeEventListener("change", apply);
  }, [choice]);
  return [choice, setChoice];
}
