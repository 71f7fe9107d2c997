// @vitest-environment happy-dom
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, expect, it, vi } from "vitest";
import type { WorkdirList } from "@corral/shared";
import { FilesPage } from "./files-page.js";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  window.history.replaceState(null, "", "/");
});

it("asks which workdir to open when there are several and no job has used any, rather than opening the first", async () => {
  const list: WorkdirList = {
    workdirs: [
      { path: "/srv/alpha", agents: ["gemini"], jobs: 0, lastJobAt: null },
      { path: "/srv/beta", agents: ["claude"], jobs: 0, lastJobAt: null },
    ],
  };
  vi.stubGlobal("fetch", async () => new Response(JSON.stringify(list), { status: 200, headers: { "content-type": "application/json" } }));
  window.history.replaceState(null, "", "/files");
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <FilesPage />
    </QueryClientProvider>,
  );
  expect(await screen.findByText("Choose a workdir")).toBeTruthy();
  expect(screen.getByRole("combobox", { name: "Workdir" })).toHaveProperty("value", "");
  expect(screen.queryByRole("navigation", { name: "Workdir tree" })).toBeNull();
  expect(window.location.search).toBe("");
});
