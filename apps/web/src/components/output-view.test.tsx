// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { appendOutput, emptyOutput } from "../lib/output-buffer.js";
import { matchingLines, OutputLineView, OutputView } from "./output-view.js";
import { StatusBadge } from "./status-badge.js";

afterEach(cleanup);

describe("OutputView", () => {
  it("renders a line with its colours and search hits", () => {
    const { container } = render(<OutputLineView line={{ stream: "err", text: "x \u001b[32mbeta\u001b[0m beta" }} number={7} query="beta" current={false} />);
    expect(container.querySelector("[data-stream=err]")?.textContent).toBe("7x beta beta");
    expect(container.querySelector("mark.ansi-green-fg")?.textContent).toBe("beta");
    expect(container.querySelectorAll("mark")).toHaveLength(2);
  });

  it("counts matching lines and steps through them", () => {
    const buffer = appendOutput(emptyOutput(), [{ stream: "out", text: "alpha\n\u001b[32mbeta\u001b[0m\nalphabet\n" }], 0, 10, true);
    expect(matchingLines(buffer.lines, "ALPHA")).toEqual([0, 2]);
    render(<OutputView buffer={buffer} running={false} />);
    fireEvent.change(screen.getByLabelText("Search output"), { target: { value: "alpha" } });
    expect(screen.getByText("1 of 2 lines")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Next match" }));
    expect(screen.getByText("2 of 2 lines")).toBeTruthy();
    // Jumping to a match pauses follow mode so the view stays on it.
    expect(screen.getByRole("button", { pressed: false }).textContent).toBe("Follow");
  });

  it("says when there is no output", () => {
    render(<OutputView buffer={{ ...emptyOutput(), complete: true }} running={false} />);
    expect(screen.getByText("(no output)")).toBeTruthy();
  });

  it("labels statuses in words", () => {
    render(<StatusBadge status="timed_out" />);
    expect(screen.getByText("timed out")).toBeTruthy();
  });
});
