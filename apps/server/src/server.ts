// The server's entry point (dist/server.js, `pnpm start`, `pnpm dev`). The young generation is
// held at its first size before anything else is evaluated, which is why the server itself
// (start.ts) comes through import(): a static import would be evaluated first.
import { holdYoungGeneration } from "./lib/young-generation.js";

holdYoungGeneration();
await import("./start.js");
