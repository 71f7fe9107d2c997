import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ApiRequestError } from "./api/client.js";
import { App } from "./app.js";
import { LiveProvider } from "./lib/transport/live-context.js";
import "./styles.css";

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refused token or a missing thing will not fix itself by asking again.
      retry: (failures, error) => !(error instanceof ApiRequestError && error.status < 500) && failures < 2,
      refetchOnWindowFocus: true,
    },
  },
});

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <LiveProvider>
          <App />
        </LiveProvider>
      </QueryClientProvider>
    </StrictMode>,
  );
}
