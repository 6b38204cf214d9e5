/**
 * `npm run lab -- --workload transfer --strategy unordered --workers 8 --transactions 100 --seed 1 [--json]`:
 * runs the retry lab headless on the engine's virtual clock and prints its measurements.
 */
import { runLab } from '../retrylab/runner';
import { LAB_USAGE, parseLabArgs, type LabCli } from '../retrylab/args';
import { goCode, tsCode } from '../retrylab/codegen';
import type { LabResult } from '../retrylab/types';

/** The headline measurements first, in a fixed order (what scripts read from the JSON line); then the rest. */
function summary(r: LabResult): Record<string, unknown> {
  return {
    committed: r.committed,
    deadlocks: r.deadlocks,
    serializationFailures: r.serializationFailures,
    lockTimeouts: r.lockTimeouts,
    retries: r.retries,
    giveUps: r.giveUps,
    virtualMs: r.virtualMs,
    wallMs: r.wallMs,
    invariantHolds: r.invariant.holds,
    startupMs: r.startupMs,
    txPerWallSecond: r.wallMs > 0 ? Math.round((((r.committed + r.giveUps) * 1000) / r.wallMs) * 10) / 10 : null,
    throughputPerVirtualSecond: Math.round(r.throughput * 10) / 10,
    latencyMs: r.latency,
    emptyCommits: r.emptyCommits,
    otherErrors: r.otherErrors,
    statements: r.statements,
    wastedStatements: r.wastedStatements,
    wastedMs: r.wastedMs,
    lockWaitMs: r.lockWaitMs,
    backoffMs: r.backoffMs,
    invariant: r.invariant.detail,
  };
}

async function main(): Promise<void> {
  let cli: LabCli;
  try {
    cli = parseLabArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${(e as Error).message}\n${LAB_USAGE}`);
    process.exit(2);
  }
  if (cli.code) {
    process.stdout.write(cli.code === 'go' ? goCode(cli.config) : tsCode(cli.config));
    return;
  }
  const result = await runLab(cli.config, {
    onProgress: cli.progress
      ? (p) =>
          process.stderr.write(
            `\r${p.finished}/${p.total} tx, ${p.committed} committed, ${p.deadlocks} deadlocks, ${Math.round(p.wallMs)} ms`,
          )
      : undefined,
  });
  if (cli.progress) process.stderr.write('\n');
  const s = summary(result);
  if (cli.json) {
    console.log(JSON.stringify(s));
    return;
  }
  const c = cli.config;
  console.log(
    `${c.workload} / ${c.strategy} / ${c.isolation}: ${c.workers} workers × ${c.transactions} transactions, ${c.rows} rows, seed ${c.seed}`,
  );
  for (const [k, v] of Object.entries(s)) console.log(`  ${k.padEnd(28)} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  if (!result.invariant.holds) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
