import { defineConfig } from "vitest/config";
import LongestFirstSequencer from "./test/helpers/longest-first";

// Two projects: `unit` (pure functions, Pulumi mocks; seconds) and `integration` (the real engine on
// the simulated cluster; minutes). Integration files may run side by side (scripts/test.sh passes
// --maxWorkers): each sim suite has a sim instance of its own (its slot) and mostly waits on its hosts;
// the images they share are built once first (test/helpers/integration-setup.ts).
export default defineConfig({
  test: {
    // Integration files longest first, so that no long suite runs alone at the end (the file says why).
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 30_000,
          // Fixtures of thousands of files are written and removed in hooks; on a loaded two-core machine
          // that outlasts Vitest's 10 s default.
          hookTimeout: 60_000,
          // Pulumi's mock monitor cannot register resource hooks (see the file).
          setupFiles: ["test/helpers/mock-hooks.ts"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          testTimeout: 45 * 60_000,
          hookTimeout: 45 * 60_000,
          globalSetup: ["test/helpers/integration-setup.ts"],
          pool: "forks",
        },
      },
    ],
  },
});
