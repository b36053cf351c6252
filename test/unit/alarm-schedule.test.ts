import { describe, expect, it } from "vitest";
import { AlarmSchedule, type AlarmPart } from "../../objects/lib/alarm-schedule.js";

/** A storage with one alarm, and the times it was set to. */
function storage(at: number | null = null) {
  const s = {
    alarm: at,
    sets: [] as number[],
    getAlarm: async () => s.alarm,
    setAlarm: async (t: number) => {
      s.alarm = t;
      s.sets.push(t);
    },
    deletes: 0,
    deleteAlarm: async () => {
      s.alarm = null;
      s.deletes++;
    },
  };
  return s;
}

function part(name: string, due: number | null, run: (now: number) => void = () => {}): AlarmPart & { due: number | null; runs: number } {
  const p = {
    name,
    due,
    runs: 0,
    nextDueAt: () => p.due,
    runDue: async (now: number) => {
      p.runs++;
      run(now);
    },
  };
  return p;
}

describe("the alarm schedule", () => {
  it("moves the alarm earlier on an update, never later, and writes only when it moves", async () => {
    const store = storage(Date.now() + 60_000);
    const schedule = new AlarmSchedule(store);
    const wait = part("wait", Date.now() + 90_000);
    schedule.add(wait);
    await schedule.update();
    expect(store.sets).toEqual([]);
    wait.due = Date.now() + 10_000;
    await schedule.update();
    await schedule.update();
    expect(store.sets).toEqual([wait.due]);
  });

  it("runs the parts that are due, and sets the alarm to the earliest part left, whoever set it before", async () => {
    const store = storage();
    const schedule = new AlarmSchedule(store);
    const later = Date.now() + 90_000;
    const safety = part("safety", Date.now() - 1, function () {
      safety.due = null;
    });
    const wait = part("wait", later);
    schedule.add(safety);
    schedule.add(wait);
    await schedule.run();
    expect([safety.runs, wait.runs]).toEqual([1, 0]);
    expect(store.alarm).toBe(later);
  });

  it("tries a part its run left due again a few seconds on, not at once, and keeps the others going", async () => {
    const store = storage();
    const schedule = new AlarmSchedule(store);
    const failing = part("failing", Date.now() - 1, () => {
      throw new Error("store down");
    });
    const other = part("other", Date.now() - 1, () => void (other.due = null));
    schedule.add(failing);
    schedule.add(other);
    const before = Date.now();
    await schedule.run();
    expect(other.runs).toBe(1);
    expect(store.alarm).toBeGreaterThanOrEqual(before + 5000);
  });

  it("deletes the alarm once nothing is due, keeps it while anything is, and sets it again on the next update", async () => {
    const store = storage();
    const schedule = new AlarmSchedule(store);
    const push = part("push", Date.now() + 60_000);
    const wait = part("wait", Date.now() + 90_000);
    schedule.add(push);
    schedule.add(wait);
    await schedule.update();
    push.due = null;
    await schedule.clearIfIdle();
    expect(store.deletes).toBe(0);
    expect(store.alarm).toBe(store.sets[0]);
    wait.due = null;
    await schedule.clearIfIdle();
    expect([store.deletes, store.alarm]).toEqual([1, null]);
    await schedule.clearIfIdle();
    expect(store.deletes).toBe(1);
    push.due = Date.now() + 60_000;
    await schedule.update();
    expect(store.alarm).toBe(push.due);
  });

  it("runs a safety net on every alarm, due or not", async () => {
    const schedule = new AlarmSchedule(storage());
    const net = Object.assign(part("net", null), { everyAlarm: true });
    schedule.add(net);
    await schedule.run();
    expect(net.runs).toBe(1);
  });

  it("tries an update the storage refused again, until the alarm is set", async () => {
    const store = storage();
    let refusals = 2;
    const refusing = { ...store, setAlarm: async (t: number) => (refusals-- > 0 ? Promise.reject(new Error("SQLITE_FULL: database or disk is full")) : store.setAlarm(t)) };
    const schedule = new AlarmSchedule(refusing, 20);
    const due = Date.now() + 90_000;
    schedule.add(part("wait", due));
    await expect(schedule.update()).rejects.toThrow(/SQLITE_FULL/);
    for (let i = 0; i < 100 && store.alarm === null; i++) await new Promise((r) => setTimeout(r, 10));
    expect(store.alarm).toBe(due);
  });
});
