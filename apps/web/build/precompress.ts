import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { Plugin } from "vite";

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** Text assets worth compressing; images and fonts are compressed already. */
const COMPRESSIBLE = /\.(js|mjs|css|svg|json|map|txt)$/;
/** Below this a compressed copy saves less than its headers cost. */
const MIN_BYTES = 1024;

/**
 * Writes `.br` (quality 11) and `.gz` (level 9) beside each hashed asset, once at build, so the
 * server sends them without compressing per request (docs/architecture.md, "How the panel's files are served"). Quality 11
 * takes about a second for the main bundle: fine once, too slow for every request, and on-the-fly
 * brotli at a quality fast enough to serve live is no smaller than gzip.
 */
export function precompressAssets(assetsDir = "assets"): Plugin {
  let outDir = "dist";
  return {
    name: "corral-precompress-assets",
    apply: "build",
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const dir = path.join(outDir, assetsDir);
      const names = (await readdir(dir)).filter((n) => COMPRESSIBLE.test(n));
      await Promise.all(
        names.map(async (name) => {
          const file = path.join(dir, name);
          const data = await readFile(file);
          if (data.length < MIN_BYTES) return;
          const [br, gzipped] = await Promise.all([
            brotli(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }),
            gz(data, { level: 9 }),
          ]);
          await Promise.all([writeFile(`${file}.br`, br), writeFile(`${file}.gz`, gzipped)]);
        }),
      );
    },
  };
}
