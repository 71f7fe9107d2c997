import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
for (const path of ["/mcp/gemini", "/mcp", "/mcp/gemini?options=all", "/mcp?options=all"])
  for (const era of ["legacy", "modern"]) {
    const c = new Client({ name: "x", version: "1" }, era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : undefined);
    await c.connect(
      new StreamableHTTPClientTransport(new URL(process.argv[2] + path), {
        requestInit: { headers: { authorization: `Bearer ${process.argv[3]}` } },
      }),
    );
    const { tools } = await c.listTools();
    console.log(era, path, tools.length, JSON.stringify(tools).length);
    if (path === "/mcp/gemini" && era === "legacy") console.log(JSON.stringify(tools, null, 1));
    await c.close();
  }
