import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { precompress } from './vite-precompress.js';

const backend = process.env.VITE_DEV_BACKEND ?? 'http://localhost:3000';

// Vendor groups keep long-lived libraries in stable chunks. antd is deliberately NOT one group: each lazy page
// pulls only the antd components it uses, which keeps the first load (entry + its static imports) small.
export default defineConfig({
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1200,
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules[\\/](react|react-dom|scheduler|react-router)[\\/]/, priority: 30 },
            { name: 'i18n', test: /node_modules[\\/](i18next|react-i18next)[\\/]/, priority: 20 },
            // No 'charts' group: a group drags its captured modules' dependencies (react-is, clsx, …) along, and the
            // entry then imported the whole recharts chunk. Left alone, recharts stays in the /detail route chunk.
            { name: 'marked', test: /node_modules[\\/]marked[\\/]/, priority: 20 },
          ],
        },
      },
    },
  },
  server: {
    proxy: {
      '/api': { target: backend, changeOrigin: true },
      '/v1': { target: backend, changeOrigin: true },
      '/pg': { target: backend, changeOrigin: true },
    },
  },
});
