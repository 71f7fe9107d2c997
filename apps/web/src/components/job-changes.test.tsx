// @vitest-environment happy-dom
import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { DiffView } from "./job-changes.js";

afterEach(cleanup);

// A worker writes the files and names them: every part of a diff is hostile text.
const hostile = [
  'diff --git a/<img src=x onerror="alert(1)">.html b/<img src=x onerror="alert(1)">.html',
  "new file mode 100644",
  "--- /dev/null",
  '+++ b/<img src=x onerror="alert(1)">.html',
  "@@ -0,0 +1,2 @@ <script>alert(2)</script>",
  "+<script>alert(3)</script>",
  '+<a href="javascript:alert(4)">x</a>',
  "",
].join("\n");

describe("the Changes view's diff", () => {
  for (const layout of ["line-by-line", "side-by-side"] as const) {
    it(`shows a hostile diff as text, never as markup (${layout})`, () => {
      const { container } = render(<DiffView diff={hostile} layout={layout} />);
      expect(container.querySelector(".d2h-file-list-wrapper, .d2h-file-wrapper")).not.toBeNull();
      expect(container.querySelectorAll("script, img, a[href^='javascript']")).toHaveLength(0);
      expect(container.textContent).toContain("<script>alert(3)</script>");
      expect(container.textContent).toContain('<img src=x onerror="alert(1)">.html');
    });
  }
});
