import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    setupFiles: ['src/test/setup.tsx'],
    // page tests drive antd forms through many renders; on a loaded two-core machine one can pass 5 s
    testTimeout: 20_000,
  },
});
