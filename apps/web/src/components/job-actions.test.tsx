// @vitest-environment happy-dom
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Job } from "@corral/shared";
import { CancelButton, RelaunchButton } from "./job-actions.js";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const job = (status: Job["status"]) =>
  ({
    id: "abc123def456",
    agent: "gemini",
    status,
    prompt: "p",
    workdir: "/w",
    model: null,
    timeoutS: 60,
    limits: { maxCostUsd: null, maxTokens: null },
  }) as Job;

function inRow(node: React.ReactNode) {
  const client = new QueryClient({ defaultOptions: { mutations: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <table>
        <tbody>
          <tr>
            <td data-testid="actions">{node}</td>
          </tr>
        </tbody>
      </table>
    </QueryClientProvider>,
  );
}

describe("row actions", () => {
  it("offers Relaunch only once a job has ended, and Cancel only while it has not", () => {
    inRow(
      <>
        <RelaunchButton job={job("running")} />
        <CancelButton job={job("running")} />
      </>,
    );
    expect(screen.queryByRole("button", { name: /Relaunch/ })).toBeNull();
    expect(screen.getByRole("button", { name: "Cancel job abc123def456" })).toBeTruthy();
    cleanup();
    inRow(
      <>
        <RelaunchButton job={job("succeeded")} />
        <CancelButton job={job("succeeded")} />
      </>,
    );
    expect(screen.getByRole("button", { name: /Relaunch/ })).toBeTruthy();
    expect(screen.queryByRole("button", { name: /Cancel/ })).toBeNull();
  });

  it("tells a failed relaunch outside the row, which keeps only its button", async () => {
    const message = "/w is in use by job xyz (kiro, running)";
    vi.stubGlobal("fetch", async () => new Response(JSON.stringify({ error: message, field: "workdir" }), { status: 409 }));
    inRow(<RelaunchButton job={job("failed")} />);
    fireEvent.click(screen.getByRole("button", { name: /Relaunch/ }));
    const alert = await waitFor(() => screen.getByRole("alert"));
    expect(alert.textContent).toContain(message);
    expect(screen.getByTestId("actions").contains(alert)).toBe(false);
    expect(screen.getByTestId("actions").textContent).toBe("Relaunch");
    fireEvent.click(screen.getByRole("button", { name: /^Dismiss/ }));
    await waitFor(() => expect(screen.queryByRole("alert")).toBeNull());
  });

  it("offers Enable for a disabled agent's job, then relaunches it", async () => {
    const calls: string[] = [];
    let enabled = false;
    vi.stubGlobal("fetch", async (url: string, init?: RequestInit) => {
      calls.push(`${init?.method ?? "GET"} ${url}`);
      if (url.startsWith("/api/agents/gemini")) {
        enabled = true;
        return new Response(JSON.stringify({ name: "gemini", enabled: true }), { status: 200 });
      }
      if (!enabled) {
        const refusal = { error: "agent gemini is disabled; enable it to run jobs", field: "agent", code: "agent_disabled", agent: "gemini" };
        return new Response(JSON.stringify(refusal), { status: 409 });
      }
      return new Response(JSON.stringify({ ...job("queued"), id: "fedcba654321" }), { status: 201 });
    });
    inRow(<RelaunchButton job={job("failed")} />);
    fireEvent.click(screen.getByRole("button", { name: /Relaunch/ }));
    const enable = await waitFor(() => screen.getByRole("button", { name: "Enable gemini and relaunch" }));
    fireEvent.click(enable);
    await waitFor(() => expect(calls.filter((c) => c.startsWith("POST /api/jobs"))).toHaveLength(2));
    expect(calls).toContain("PATCH /api/agents/gemini");
  });
});
