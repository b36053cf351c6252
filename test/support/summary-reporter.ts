import type { Reporter, TestModule } from "vitest/node";

/** Ends the run with the plain line CI reads: `tests: N passed, N failed, N skipped`. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    for (const m of modules) for (const t of m.children.allTests()) count[t.result().state]++;
    console.log(`tests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped`);
  }
}
