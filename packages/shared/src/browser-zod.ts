import { z } from "zod";

// The panel runs under a Content-Security-Policy without 'unsafe-eval', and zod compiles object
// parsers with `new Function` (probing for it is itself a reported violation). Set before any
// schema is defined (index.ts imports this first): in a browser they are interpreted; the server
// keeps the compiled ones.
if ("document" in globalThis) z.config({ jitless: true });
