import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ACCOUNTS_TOKEN_HEADER } from "../../src/api/accounts.js";
import { reply } from "../binding-http.js";
import type { AccountPool } from "./pool.js";

export interface AccountService {
  /** host:port, for the worker's ACCOUNTS binding. */
  address: string;
  close(): Promise<void>;
}

/**
 * The account pool as a binding of the worker: health and identity for `GET /accounts`,
 * and short-lived access tokens. Only the worker (holding this boot's token) is
 * answered; the worker decides whether its own caller is trusted.
 */
export async function startAccountService(pool: AccountPool, token: string): Promise<AccountService> {
  const server: Server = createServer((req, res) => {
    req.resume();
    if (req.headers[ACCOUNTS_TOKEN_HEADER] !== token) return reply(res, 403, { error: "the account pool answers the runtime's worker only" });
    const path = new URL(req.url ?? "/", "http://accounts").pathname;
    if (req.method === "GET" && path === "/accounts") return reply(res, 200, { accounts: pool.views() });
    const m = /^\/accounts\/([^/]+)\/access-token$/.exec(path);
    if (req.method === "POST" && m)
      return void pool.issueAccessToken(decodeURIComponent(m[1]!)).then(
        (issued) => reply(res, issued.status, issued.body, "retryAfterS" in issued && issued.retryAfterS ? { "retry-after": String(issued.retryAfterS) } : {}),
        (err: unknown) => reply(res, 503, { error: (err as Error).message, code: "credential-unreachable" }),
      );
    reply(res, 404, { error: `no account route ${req.method} ${path}` });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
