import type { AlarmPart } from "../lib/alarm-schedule.js";
import { addMissingColumn } from "../lib/sql-columns.js";
import { LOG_SCHEMA } from "./log/event-log.js";
import { STATE_SCHEMA } from "./thread-state.js";
import { TURN_SCHEMA } from "./turn/schema.js";
import { Compaction } from "./compaction/compaction.js";
import { Lifecycle, type Creation } from "./lifecycle.js";
import { IdempotencyKeys } from "./log/idempotency.js";
import { Readers } from "./log/readers.js";
import { Gates } from "./orchestration/gates.js";
import { Handoffs } from "./orchestration/handoffs.js";
import { Loops } from "./orchestration/loops.js";
import { Operations, OPERATIONS_SCHEMA } from "./orchestration/operations.js";
import { Seats } from "./orchestration/seats.js";
import { Subscriptions, SUBSCRIPTIONS_SCHEMA } from "./orchestration/subscriptions.js";
import { Waits } from "./orchestration/waits.js";
import { Watchers, WATCHERS_SCHEMA } from "./orchestration/watchers.js";
import type { ThreadAccess } from "./thread-access.js";
import { TurnDriver } from "./turn/driver.js";
import { Inbox } from "./turn/inbox.js";
import { Interfaces } from "./interfaces.js";
import { TurnTools } from "./turn/tools.js";

/** The Thread's parts, each built from the slice of the Thread and of the other parts it uses. */
export interface ThreadParts {
  /** Pages, tool results and the SSE routes. */
  readonly readers: Readers;
  readonly idempotency: IdempotencyKeys;
  readonly watchers: Watchers;
  readonly waits: Waits;
  readonly operations: Operations;
  readonly gates: Gates;
  readonly handoffs: Handoffs;
  readonly compaction: Compaction;
  readonly loops: Loops;
  readonly driver: TurnDriver;
  readonly subscriptions: Subscriptions;
  readonly seats: Seats;
  readonly tools: TurnTools;
  readonly inbox: Inbox;
  readonly lifecycle: Lifecycle;
  /** Generated interfaces (docs/ui.md). */
  readonly interfaces: Interfaces;
  /** Every part that needs the object's one alarm, each reporting when it next does. */
  readonly timed: AlarmPart[];
}

/** The tables of the Thread and its parts, made on every start (a new column added to an older table). */
export function installTables(sql: SqlStorage): void {
  sql.exec(LOG_SCHEMA + STATE_SCHEMA + TURN_SCHEMA + OPERATIONS_SCHEMA + SUBSCRIPTIONS_SCHEMA + WATCHERS_SCHEMA);
  // Held messages made before seats lack who sent them and which seat they are for.
  addMissingColumn(sql, "held", "sender");
  addMissingColumn(sql, "held", "seat");
}

export function buildParts(access: ThreadAccess, creation: Creation): ThreadParts {
  const readers = new Readers(access);
  const idempotency = new IdempotencyKeys(access.sql);
  const watchers = new Watchers(access, access.config.faults.has("wake-deliver"));
  const waits = new Waits(access);
  const operations = new Operations(access, () => driver.kick());
  const gates = new Gates(access, waits, operations);
  const handoffs = new Handoffs(access);
  // A cut of the context waits while a delegation's child has not answered (WindowBlocked).
  const compaction = new Compaction(access, () => operations.delegationOpen());
  const loops = new Loops(access, () => driver.kick());
  const driver = new TurnDriver(access, { waits, loops, compaction });
  const subscriptions = new Subscriptions(access, () => driver.kick());
  const seats = new Seats(access, driver, handoffs);
  const tools = new TurnTools(access, handoffs);
  const inbox = new Inbox(access, idempotency, driver);
  const lifecycle = new Lifecycle(access, driver, creation, watchers);
  const interfaces = new Interfaces(access, () => creation.row());
  const timed = [waits.alarm, handoffs.alarm, driver.startAlarm, driver.keepAliveAlarm, driver.reportAlarm, watchers.alarm];
  return { readers, idempotency, watchers, waits, operations, gates, handoffs, compaction, loops, driver, subscriptions, seats, tools, inbox, lifecycle, interfaces, timed };
}
