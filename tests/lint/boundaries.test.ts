import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/** Each layer boundary of eslint.config.js, with an import that crosses it and one that does not. */
const CASES: { boundary: string; filePath: string; crossing: string; allowed: string }[] = [
  {
    boundary: 'model/ imports no PGlite',
    filePath: 'src/engine/model/acquire.ts',
    crossing: "import { PGlite } from '@electric-sql/pglite';",
    allowed: "import { LockManager } from './locks';",
  },
  {
    boundary: 'model/ imports nothing from pg/',
    filePath: 'src/engine/model/txn.ts',
    crossing: "import { PgliteExecutor } from '../pg/executor';",
    allowed: "import type { ModelState } from '../state';",
  },
  {
    boundary: 'model/ does not call the orchestrator',
    filePath: 'src/engine/model/plan.ts',
    crossing: "import { Engine } from '../engine';",
    allowed: "import { PG } from './messages';",
  },
  {
    boundary: 'model/ imports no drawing library',
    filePath: 'src/engine/model/locks/modes.ts',
    crossing: "import * as d3 from 'd3';",
    allowed: "import type { LockMode } from './types';",
  },
  {
    boundary: 'src/engine imports nothing from src/scenario',
    filePath: 'src/engine/pg/dryRun.ts',
    crossing: "import type { Spec } from '../../scenario/types';",
    allowed: "import type { RawResult } from '../types';",
  },
  {
    boundary: 'src/engine imports nothing from src/ui',
    filePath: 'src/engine/statement.ts',
    crossing: "import { t } from '../ui/i18n/i18n';",
    allowed: "import { PG } from './model/messages';",
  },
  {
    boundary: 'src/ui does not import the engine orchestrator',
    filePath: 'src/ui/model/session.ts',
    crossing: "import { Engine } from '../../engine/engine';",
    allowed: "import type { EngineSnapshot } from '../../engine/types';",
  },
  {
    boundary: 'src/ui does not import engine/pg',
    filePath: 'src/ui/backend.ts',
    crossing: "import { PgliteExecutor } from '../engine/pg/executor';",
    allowed: "import { lockBit } from '../engine/model/locks/modes';",
  },
];

describe('ESLint layer boundaries', () => {
  let eslint: ESLint;
  beforeAll(() => {
    eslint = new ESLint({ cwd: process.cwd() });
  });
  const restricted = async (code: string, filePath: string) => {
    const [r] = await eslint.lintText(
      `${code}\nexport const used = [${/import \{ (\w+)|import \* as (\w+)|import type \{ (\w+)/.exec(code)!.slice(1).find(Boolean)}];\n`,
      { filePath },
    );
    return r.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
  };
  it.each(CASES)('$boundary', async ({ filePath, crossing, allowed }) => {
    expect(await restricted(crossing, filePath)).toHaveLength(1);
    expect(await restricted(allowed, filePath)).toEqual([]);
  });
});
