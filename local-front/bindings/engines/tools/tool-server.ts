import type { IncomingMessage, ServerResponse } from "node:http";
import type { AnySchema } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import { RUNTIME_TOOLS, RUNTIME_TOOLS_SERVER } from "../../../../src/api/tools.js";
import { CODES } from "../../../../src/api/errors.js";
import { refuse, type Refusal } from "../../../../src/api/outcome.js";
import { newToken, serveBinding } from "../../http.js";
import { describeTool, runRuntimeTool, type RuntimeLink, type ToolScope } from "./runtime-tools.js";

export interface ToolServer {
  /** `http://127.0.0.1:<port>/mcp`: what engine_a's and engine_b's MCP configuration names. */
  url: string;
  /** A token for one running turn: it reaches that turn's tools only, until `revoke`. */
  grant(scope: ToolScope): string;
  revoke(token: string): void;
  close(): Promise<void>;
}

/**
 * The runtime's tools as an MCP server (streamable HTTP, stateless: each POST is a whole
 * exchange), on a loopback port of its own. It is the one port of the front that sessions
 * reach besides the credential proxy's, so it serves nothing else: the engine host's turn
 * routes (approvals, answers) stay out of a session's reach. Each request names its turn
 * by a bearer token the engine host granted when the turn started; the worker checks the
 * turn again on every call, so a token that outlives its turn acts on nothing.
 */
export async function startToolServer(link: RuntimeLink): Promise<ToolServer> {
  const scopes = new Map<string, ToolScope>();
  let host = "";
  // The MCP SDK loads with the first call of an engine_a or engine_b session, not with the front.
  let sdk: Promise<[typeof import("@modelcontextprotocol/sdk/server/mcp.js"), typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js")]> | null = null;

  const serve = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<Refusal | void> => {
    if (url.pathname !== "/mcp") return refuse(404, `no route ${url.pathname}: the runtime's tools are at /mcp`, CODES.routeNotFound);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const scope = token ? scopes.get(token) : undefined;
    // A token is granted for one running turn and revoked when it ends.
    if (!scope) return refuse(401, "a running turn's bearer token is needed", CODES.turnNotRunning);
    // Stateless: no session to resume (GET) or end (DELETE).
    if (req.method !== "POST") return refuse(405, "POST only", CODES.methodNotAllowed, undefined, { allow: "POST" });
    const [{ McpServer }, { StreamableHTTPServerTransport }] = await (sdk ??= Promise.all([import("@modelcontextprotocol/sdk/server/mcp.js"), import("@modelcontextprotocol/sdk/server/streamableHttp.js")]));
    const server = new McpServer({ name: RUNTIME_TOOLS_SERVER, version: "1.0.0" });
    for (const name of scope.tools)
      server.registerTool(name, { description: describeTool(name, scope), inputSchema: RUNTIME_TOOLS[name].input as AnySchema }, async (input: unknown, extra: { signal: AbortSignal }) => {
        const r = await runRuntimeTool(link, scope, name, input, extra.signal);
        return { content: [{ type: "text" as const, text: r.text }], isError: r.isError };
      });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      allowedHosts: [host],
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const http = await serveBinding({ name: "the tool server" }, serve);
  host = http.address;
  return {
    url: `http://${host}/mcp`,
    grant(scope) {
      const token = newToken();
      scopes.set(token, scope);
      return token;
    },
    revoke: (token) => void scopes.delete(token),
    close: http.close,
  };
}
