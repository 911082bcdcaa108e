import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// console.e2e.ts performs the setup wizard, so it must run before every other spec. midjourney.e2e.ts bills a drawing,
// which relay.e2e.ts's dashboard (it counts only its own relay calls) must not see: it runs last.
class ConsoleFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) =>
      f.moduleId.endsWith('console.e2e.ts') ? 0 : f.moduleId.endsWith('midjourney.e2e.ts') ? 2 : 1;
    return [...files].sort((a, b) => rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId));
  }
}

export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    environment: 'node',
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 120_000,
    // The console steps build on each other: stop at the first failure.
    bail: 1,
    hookTimeout: 60_000,
    sequence: { sequencer: ConsoleFirst },
  },
});
