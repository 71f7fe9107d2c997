// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { ReadableEvent } from "@corral/shared";
import { appendOutput, emptyOutput } from "../lib/domain/output-buffer.js";
import { appendReadable, emptyReadable } from "../lib/domain/readable-buffer.js";
import { matchingLines, OutputLineView, OutputView } from "./output-view.js";
import { StatusBadge } from "./status-badge.js";

afterEach(cleanup);

describe("OutputView", () => {
  it("renders a line with its colours and search hits", () => {
    const { container } = render(
      <OutputLineView line={{ stream: "err", text: "x \u001b[32mbeta\u001b[0m beta" }} number={7} query="beta" current={false} />,
    );
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

  it("shows the server's readable events by default, raw output on request, and searches what is shown", () => {
    const raw = ['{"type":"init"}', '{"type":"tool_use"}', '{"type":"tool_result"}', '{"type":"message"}', '{"type":"message"}', "plain noise"];
    const text = `${raw.join("\n")}\n`;
    const buffer = appendOutput(emptyOutput(), [{ stream: "out", text }], 0, text.length, true);
    const events: ReadableEvent[] = [
      { type: "session", model: "gemini-2.5-flash" },
      { type: "tool_call", name: "write_file", args: "/w/hello.txt" },
      { type: "tool_result", ok: true, detail: "" },
      { type: "text", text: "Done: wrote ", delta: true },
      { type: "text", text: "hello.txt\n", delta: true },
      { type: "output", stream: "out", text: "plain noise" },
    ];
    const readable = appendReadable(emptyReadable(), events, 0, text.length, true);
    render(<OutputView buffer={buffer} running={false} readable={readable} />);
    expect(screen.getByRole("button", { name: "Readable" }).getAttribute("aria-pressed")).toBe("true");
    // Five events (the answer's two pieces are one line) and the plain line, kept as is.
    expect(screen.getByText("5 lines")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Search output"), { target: { value: "wrote hello.txt" } });
    expect(screen.getByText("1 of 1 line")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Search output"), { target: { value: "→ write_file /w/hello.txt" } });
    expect(screen.getByText("1 of 1 line")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Raw" }));
    expect(screen.getByRole("button", { name: "Raw" }).getAttribute("aria-pressed")).toBe("true");
    expect(screen.getByText("6 lines")).toBeTruthy();
    expect(screen.getByText("no match")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Search output"), { target: { value: '"tool_use"' } });
    expect(screen.getByText("1 of 1 line")).toBeTruthy();
  });

  it("has no view toggle for plain-text agents", () => {
    render(<OutputView buffer={appendOutput(emptyOutput(), [{ stream: "out", text: "{}\n" }], 0, 3, true)} running={false} />);
    expect(screen.queryByRole("button", { name: "Raw" })).toBeNull();
    expect(screen.getByText("1 line")).toBeTruthy();
  });

  it("sizes the line-number gutter to the longest number, however many lines the log has", () => {
    const buffer = { ...appendOutput(emptyOutput(), [{ stream: "out", text: "last\n" }], 0, 5, true), dropped: 12_345_677 };
    const { container } = render(<OutputView buffer={buffer} running={false} />);
    expect(container.querySelector<HTMLElement>(".output")?.style.getPropertyValue("--ln-digits")).toBe("8");
  });

  it("shows why the readable view could not be read instead of loading forever", () => {
    const buffer = appendOutput(emptyOutput(), [{ stream: "out", text: "x\n" }], 0, 2, true);
    const error = new Error("Maximum call stack size exceeded");
    render(<OutputView buffer={buffer} running={false} readable={emptyReadable()} readableError={error} />);
    expect(screen.getByRole("alert").textContent).toBe("could not load the output: Maximum call stack size exceeded");
    expect(screen.queryByText("loading output…")).toBeNull();
    // The raw output, read separately, still shows.
    fireEvent.click(screen.getByRole("button", { name: "Raw" }));
    expect(screen.queryByRole("alert")).toBeNull();
    expect(screen.getByText("1 line")).toBeTruthy();
  });

  it("counts every line read, and says how many of them it still shows", () => {
    const text = "x\n".repeat(100_005);
    const buffer = appendOutput(emptyOutput(), [{ stream: "out", text }], 0, text.length, true);
    expect(buffer.lines).toHaveLength(100_000);
    render(<OutputView buffer={buffer} running={false} />);
    expect(screen.getByText("the last 100,000 of 100,005 lines")).toBeTruthy();
    expect(screen.getByText(/5 earlier lines not kept/)).toBeTruthy();
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
