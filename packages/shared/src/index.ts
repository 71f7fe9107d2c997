export * from "./enums.js";
export * from "./agents.js";
export * from "./jobs.js";
export * from "./errors.js";
export * from "./ollama.js";
export * from "./ws.js";
export * from "./files.js";
export * from "./costs.js";
