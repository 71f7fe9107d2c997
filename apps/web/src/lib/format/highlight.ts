import hljs from "highlight.js/lib/common";

const byExtension: Record<string, string> = {
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  py: "python",
  rb: "ruby",
  go: "go",
  rs: "rust",
  java: "java",
  kt: "kotlin",
  c: "c",
  h: "c",
  cpp: "cpp",
  hpp: "cpp",
  cs: "csharp",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  json: "json",
  yml: "yaml",
  yaml: "yaml",
  toml: "ini",
  ini: "ini",
  md: "markdown",
  html: "xml",
  xml: "xml",
  svg: "xml",
  css: "css",
  scss: "scss",
  sql: "sql",
  php: "php",
  swift: "swift",
  lua: "lua",
  diff: "diff",
  patch: "diff",
  makefile: "makefile",
  dockerfile: "dockerfile",
};

function languageFor(path: string): string | null {
  const name = path.split("/").pop()?.toLowerCase() ?? "";
  const ext = name.includes(".") ? (name.split(".").pop() ?? "") : name;
  const lang = byExtension[ext];
  return lang && hljs.getLanguage(lang) ? lang : null;
}

/** Highlighted HTML (highlight.js escapes the text), or null when the file type is unknown. */
export function highlightHtml(text: string, path: string): string | null {
  const lang = languageFor(path);
  if (!lang || text.length > 400_000) return null;
  return hljs.highlight(text, { language: lang, ignoreIllegals: true }).value;
}

const imageExtensions = new Set(["png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "ico", "avif"]);

export function isImage(path: string): boolean {
  return imageExtensions.has(path.split(".").pop()?.toLowerCase() ?? "");
}
