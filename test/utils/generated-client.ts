import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import ts from 'typescript';

/**
 * openapi-typescript's Node API, run in a child process: its CommonJS build requires ESM-only
 * dependencies, which Jest's module loader cannot load.
 */
const GENERATE = `
import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
const [input, output] = process.argv.slice(1);
writeFileSync(output, astToString(await openapiTS(JSON.parse(readFileSync(input, 'utf8')))));
`;

/**
 * What an API consumer does with one of our OpenAPI documents: generate types with
 * openapi-typescript's defaults into a fresh directory (which sees this project's node_modules, so
 * a script there may import openapi-fetch), write scripts beside them, and type-check them strictly.
 */
export interface ClientWorkspace {
  dir: string;
  /** Generates `<name>.d.ts` from the document with openapi-typescript's default options. */
  generate(document: object, name: string): Promise<string>;
  write(name: string, text: string): string;
  /** One strict program over the files; the diagnostics of each, as readable lines. */
  compile(files: string[]): Map<string, string[]>;
  /** Runs an exported function of a type-checked script (transpiled to JavaScript) with `node`. */
  run(file: string, exported: string, argument: string): Promise<string>;
}

export function createClientWorkspace(): ClientWorkspace {
  const dir = mkdtempSync(join(tmpdir(), 'fdws-client-'));
  symlinkSync(resolve(__dirname, '../../node_modules'), join(dir, 'node_modules'), 'dir');
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  return {
    dir,
    write,
    generate: async (document, name) => {
      const input = write(`${name}.json`, JSON.stringify(document));
      const output = join(dir, `${name}.d.ts`);
      await promisify(execFile)(process.execPath, ['--input-type=module', '-e', GENERATE, input, output], {
        cwd: dir,
      });
      return output;
    },
    run: async (file, exported, argument) => {
      const source = ts.transpileModule(readFileSync(file, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      const module = write(`${exported}.mjs`, source);
      const main = `const m = await import(${JSON.stringify(module)}); console.log(JSON.stringify(await m.${exported}(process.argv[1])));`;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--input-type=module', '-e', main, argument],
        {
          cwd: dir,
        },
      );
      return stdout.trim();
    },
    compile: (files) => {
      const program = ts.createProgram(files, {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: [],
        skipLibCheck: true,
        noUnusedLocals: true,
      });
      const all = ts.getPreEmitDiagnostics(program);
      return new Map(
        files.map((file) => [
          file,
          all
            .filter((diagnostic) => diagnostic.file?.fileName === file || !diagnostic.file)
            .map((diagnostic) => {
              const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
              if (!diagnostic.file || diagnostic.start === undefined) return text;
              const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
              return `${line + 1}: ${text}`;
            }),
        ]),
      );
    },
  };
}
