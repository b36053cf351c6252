import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, removeDir, startFront, type Front } from "../support/front.js";
import { call } from "../support/http.js";

/** An OAuth login against the simulator standing in for the providers, which rotates refresh tokens as they do. */
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-rotation-"));
writeFileSync(join(dataDir, "accounts.json"), JSON.stringify({ accounts: [{ id: "login", provider: "anthropic", oauth: { refreshToken: "rt-live-ROTATE-1" } }] }));
const tokens = join(dataDir, "accounts-tokens.json");

let front: Front | null = null;
afterAll(async () => {
  await front?.stop();
  removeDir(dataDir);
});

async function start(): Promise<Front> {
  front = await startFront({ dataDir, env: { SERVICE_PROVIDER_UPSTREAM: "simulator", SERVICE_AGENTS_PORT: String(await freePort()) } });
  return front;
}

/** Makes the stored access token due, so the next use refreshes the login. */
function expireAccessToken(): void {
  const store = JSON.parse(readFileSync(tokens, "utf8"));
  store.login.expiresAt = 0;
  writeFileSync(tokens, JSON.stringify(store));
}

describe("an OAuth login whose refresh token rotates", () => {
  it("keeps working across a restart, on the rotated token the pool persisted", async () => {
    let f = await start();
    const first = await call(f.url, "POST", "/accounts/login/access-token");
    expect(first.status).toBe(200);
    const rotated = JSON.parse(readFileSync(tokens, "utf8")).login.refreshToken;
    expect(rotated).toMatch(/^sim-rt-/);
    await f.stop();

    expireAccessToken();
    f = await start();
    const second = await call(f.url, "POST", "/accounts/login/access-token");
    expect(second.status).toBe(200);
    expect(second.body.accessToken).not.toBe(first.body.accessToken);
    // Rotated again: the one used after the restart is retired too.
    expect(JSON.parse(readFileSync(tokens, "utf8")).login.refreshToken).not.toBe(rotated);
    await f.stop();

    // Without the persisted rotation the login would be lost: the configured token was retired at the first refresh.
    rmSync(tokens);
    f = await start();
    const lost = await call(f.url, "POST", "/accounts/login/access-token");
    expect(lost.status).toBe(409);
    expect(lost.body.code).toMatch(/revoked|credential/);
  });
});
