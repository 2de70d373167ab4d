import { defineConfig } from 'vite';

// Where `vite` (dev) and `vite preview` forward API calls while developing.
const serverUrl = process.env.HEARTH_URL || 'http://127.0.0.1:8080';
const proxy = Object.fromEntries(
  ['/v1', '/props', '/health'].map((path) => [path, { target: serverUrl, changeOrigin: true }]),
);

export default defineConfig({
  // Relative base: the page must work when the server mounts it under --api-prefix.
  base: './',
  esbuild: {
    jsx: 'automatic',
    jsxImportSource: 'preact',
  },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    target: 'es2020',
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
  server: { proxy },
  preview: { proxy },
});
