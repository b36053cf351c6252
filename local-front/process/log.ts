/**
 * The front's operational log: one line per thing an operator wants to see (a turn that
 * ended or failed, an answer of 5xx, a shutdown). `SERVICE_LOG` sets the level (`debug`,
 * `info` default, `warn`, `error`, `off`); `SERVICE_LOG_FORMAT=json` writes JSON lines.
 * Fields are for ids, codes, counts and durations: never a secret, never a message body.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, string | number | boolean | null | undefined>;

const RANK: Record<LogLevel | "off", number> = { debug: 10, info: 20, warn: 30, error: 40, off: 100 };

export class LogConfigError extends Error {}

function levelOf(raw: string | undefined): LogLevel | "off" {
  const level = (raw || "info").toLowerCase();
  if (!(level in RANK)) throw new LogConfigError(`SERVICE_LOG must be debug, info, warn, error or off, not ${JSON.stringify(raw)}`);
  return level as LogLevel | "off";
}

function formatOf(raw: string | undefined): "text" | "json" {
  const format = (raw || "text").toLowerCase();
  if (format !== "text" && format !== "json") throw new LogConfigError(`SERVICE_LOG_FORMAT must be text or json, not ${JSON.stringify(raw)}`);
  return format;
}

/** A value as `key=value` text: bare when it is one word, quoted otherwise. */
function textValue(value: string | number | boolean | null): string {
  const s = String(value);
  return /^[\w.:/@+-]+$/.test(s) ? s : JSON.stringify(s);
}

export class Logger {
  private readonly min: number;
  private readonly json: boolean;

  constructor(env: NodeJS.ProcessEnv, private readonly write: (level: LogLevel, line: string) => void = defaultWrite) {
    this.min = RANK[levelOf(env.SERVICE_LOG)];
    this.json = formatOf(env.SERVICE_LOG_FORMAT) === "json";
  }

  debug(msg: string, fields?: LogFields): void {
    this.emit("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.emit("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.emit("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.emit("error", msg, fields);
  }

  private emit(level: LogLevel, msg: string, fields: LogFields = {}): void {
    if (RANK[level] < this.min) return;
    const present = Object.entries(fields).filter((e): e is [string, string | number | boolean | null] => e[1] !== undefined);
    const line = this.json
      ? JSON.stringify({ ts: new Date().toISOString(), level, msg, ...Object.fromEntries(present) })
      : `agent-runtime: ${level} ${msg}${present.map(([k, v]) => ` ${k}=${textValue(v)}`).join("")}`;
    this.write(level, line);
  }
}

function defaultWrite(level: LogLevel, line: string): void {
  (level === "warn" || level === "error" ? process.stderr : process.stdout).write(`${line}\n`);
}

let refused: LogConfigError | null = null;

function fromEnvironment(): Logger {
  try {
    return new Logger(process.env);
  } catch (err) {
    // Thrown at import, the refusal would be a stack trace; the front reports it in one sentence at start.
    refused = err as LogConfigError;
    return new Logger({});
  }
}

/** The front's one logger, configured from its environment at start. */
export const log = fromEnvironment();

/** Why `SERVICE_LOG` or `SERVICE_LOG_FORMAT` was refused (the logger then uses the defaults), or null. */
export function logConfigRefusal(): LogConfigError | null {
  return refused;
}
