import { useEffect } from "react";

/** Sets the browser tab's title while the page is shown, and puts the previous one back when it goes. */
export function useDocumentTitle(title: string | null): void {
  useEffect(() => {
    if (title === null) return;
    const before = document.title;
    document.title = title;
    return () => {
      document.title = before;
    };
  }, [title]);
}
