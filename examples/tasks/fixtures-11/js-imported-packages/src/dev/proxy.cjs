// Dev server proxy: forwards /api to the local backend.
const http = require('http');
const path = require('node:path');
const { createProxyMiddleware } = require('http-proxy-middleware');

const target = process.env.API_URL || 'http://localhost:8080';
const proxy = createProxyMiddleware({ target, changeOrigin: true });

http.createServer((req, res) => proxy(req, res, () => res.end())).listen(5174, () => {
  console.log(`proxy for ${path.basename(target)} on :5174`);
});
