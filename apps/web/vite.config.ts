import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";
import { precompressAssets } from "./build/precompress.js";

export default defineConfig({
  plugins: [react(), precompressAssets()],
  resolve: { conditions: ["corral-source"] },
  build: { outDir: "dist", emptyOutDir: true },
});
