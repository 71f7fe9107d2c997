import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
const c = new Client({ name: "x", version: "1" });
await c.connect(
  new StreamableHTTPClientTransport(new URL(process.argv[2] + "/mcp"), { requestInit: { headers: { authorization: `Bearer ${process.argv[3]}` } } }),
);
const { tools } = await c.listTools();
for (const t of tools)
  if (!/_(run|run_async|done)$/.test(t.name)) console.log(t.name, JSON.stringify(t).length, JSON.stringify(t.inputSchema).length);
console.log(
  tools
    .filter((t) => /_(run|run_async|done)$/.test(t.name))
    .map((t) => t.name)
    .join(" "),
);
await c.close();
