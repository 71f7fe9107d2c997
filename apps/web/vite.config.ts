import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  resolve: { conditions: ["corral-source"] },
  build: { outDir: "dist", emptyOutDir: true },
});
