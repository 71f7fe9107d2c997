// @vitest-environment happy-dom
import { cleanup, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KnownWorkdir } from "../lib/domain/workdir-choice.js";
import { WorkdirPicker } from "./workdir-picker.js";

afterEach(cleanup);

const workdirs: KnownWorkdir[] = Array.from({ length: 67 }, (_, i) => ({
  path: `/srv/project-${String(i).padStart(2, "0")}`,
  agents: i === 41 ? ["gemini"] : [],
  jobs: i % 3,
  lastJobAt: i % 3 ? i * 1000 : null,
}));

function show(value = "/srv/project-10") {
  const onChange = vi.fn();
  render(<WorkdirPicker workdirs={workdirs} value={value} onChange={onChange} />);
  return { onChange, box: screen.getByRole("combobox", { name: "Workdir" }) };
}

describe("the workdir picker", () => {
  it("is a box named Workdir showing the current one, its list closed", () => {
    const { box } = show();
    expect(box).toHaveProperty("value", "/srv/project-10");
    expect(box.getAttribute("aria-expanded")).toBe("false");
    expect(screen.queryByRole("listbox")).toBeNull();
  });

  it("filters as one types and picks with the arrows and Enter", async () => {
    const user = userEvent.setup();
    const { box, onChange } = show();
    await user.click(box);
    expect(screen.getAllByRole("option")).toHaveLength(67);
    await user.keyboard("project-4");
    const options = screen.getAllByRole("option");
    expect(options.map((o) => o.querySelector(".mono")?.textContent)).toEqual(
      // Most recently used first; those no job used (no time) last.
      [
        "/srv/project-49",
        "/srv/project-47",
        "/srv/project-46",
        "/srv/project-44",
        "/srv/project-43",
        "/srv/project-41",
        "/srv/project-40",
        "/srv/project-42",
        "/srv/project-45",
        "/srv/project-48",
      ],
    );
    expect(screen.getByRole("status").textContent).toBe("10 workdirs of 67 match");
    expect(box.getAttribute("aria-activedescendant")).toBe(options[0]?.id);
    await user.keyboard("{ArrowDown}{ArrowDown}{ArrowUp}");
    expect(box.getAttribute("aria-activedescendant")).toBe(options[1]?.id);
    await user.keyboard("{Enter}");
    expect(onChange).toHaveBeenCalledWith("/srv/project-47");
    expect(screen.queryByRole("listbox")).toBeNull();
  });

  it("finds a workdir by its agent's name, says when nothing matches, and Escape puts the current one back", async () => {
    const user = userEvent.setup();
    const { box, onChange } = show();
    await user.click(box);
    await user.keyboard("gemini");
    expect(screen.getAllByRole("option").map((o) => o.querySelector(".mono")?.textContent)).toEqual(["/srv/project-41"]);
    await user.clear(box);
    await user.keyboard("zzz");
    expect(screen.queryAllByRole("option")).toHaveLength(0);
    expect(screen.getByText("No workdir matches “zzz”.")).toBeTruthy();
    await user.keyboard("{Escape}");
    expect(box).toHaveProperty("value", "/srv/project-10");
    expect(onChange).not.toHaveBeenCalled();
  });

  it("picks with a click", async () => {
    const user = userEvent.setup();
    const { box, onChange } = show();
    await user.click(box);
    await user.click(screen.getByRole("option", { name: /project-66/ }));
    expect(onChange).toHaveBeenCalledWith("/srv/project-66");
  });
});
