import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { OAuthLogin } from "../../../src/api/accounts.js";

export interface LoginTokens {
  refreshToken: string;
  accessToken?: string;
  expiresAt?: number;
  /** When the access token was issued, so its lifetime is known. */
  issuedAt?: number;
}

interface Entry extends LoginTokens {
  /** Hash of the refresh token the accounts file held when this entry was made. */
  origin: string;
}

function fingerprint(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * The tokens refreshes produced, kept on the host (mode 0600) because providers rotate
 * refresh tokens: losing the new one would lose the login. An entry applies only while
 * the accounts file still holds the refresh token it grew from, so an operator who puts
 * a fresh login in the file is obeyed.
 */
export class TokenStore {
  private entries: Record<string, Entry>;

  constructor(private readonly path: string) {
    this.entries = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, Entry>) : {};
  }

  get(account: string, login: OAuthLogin): LoginTokens {
    const entry = this.entries[account];
    if (entry && entry.origin === fingerprint(login.refreshToken)) return entry;
    return { refreshToken: login.refreshToken, accessToken: login.accessToken, expiresAt: login.expiresAt };
  }

  put(account: string, login: OAuthLogin, tokens: LoginTokens): void {
    this.entries[account] = { ...tokens, origin: fingerprint(login.refreshToken) };
    const temp = `${this.path}.tmp`;
    writeFileSync(temp, JSON.stringify(this.entries), { mode: 0o600 });
    renameSync(temp, this.path);
  }
}
