import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Feature folders of src/ (DESIGN.md section 3); common/, config/ and database/ are the layer below them. */
const FEATURES = [
  'auth',
  'users',
  'roles',
  'sites',
  'permissions',
  'form-configs',
  'validation',
  'data',
  'export',
  'stats',
  'health',
  'workflow',
  'ai',
  'webhooks',
  'events',
  'idempotency',
  'mail',
  'erasure',
  'attachments',
  'imports',
];
const up = (levels) => '\\.\\./'.repeat(levels);

/**
 * common/ and database/ import no feature folder: the dependency points from features down to them.
 * A file `depth` folders below src/ reaches src/ with `depth` times `../`, so one override per depth
 * names exactly the imports that land in a feature folder (and not, say, common/auth/).
 */
const infrastructureImportsNoFeature = [1, 2, 3, 4].map((depth) => ({
  files: [`src/{common,database}/${'*/'.repeat(depth - 1)}*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^${up(depth)}(${FEATURES.join('|')})(/|$)`,
            message: 'common/ and database/ must not depend on a feature folder; move the code to its owner.',
          },
        ],
      },
    ],
  },
}));

/**
 * A feature reaches another feature through its services, never its repository (type imports of
 * row types are allowed). A file `nesting` folders inside its feature leaves it with nesting + 1 `../`.
 */
const noOtherFeaturesRepository = [0, 1, 2].map((nesting) => ({
  files: [`src/{${FEATURES.join(',')}}/${'*/'.repeat(nesting)}*.ts`],
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^${up(nesting + 1)}[^./][^/]*/(.+/)?[^/]+\\.repository$`,
            allowTypeImports: true,
            message: "Use the other module's exported service; repositories are private to their module.",
          },
        ],
      },
    ],
  },
}));

/**
 * Step types import the engine only through the step SDK (src/workflow/sdk/index.ts), as a third
 * party's would; their own folder, steps/ helpers and other features' services stay reachable. The
 * `save` step alone may open the run's carried write (sdk/run-write-handle).
 */
const stepsOnTheSdk = (allowed) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        {
          regex: `^\\.\\./\\.\\./(?!sdk$${allowed}|\\.\\.)`,
          message: 'A step imports the workflow engine only from src/workflow/sdk (the step SDK index).',
        },
      ],
    },
  ],
});
const stepsImportTheSdk = [
  { files: ['src/workflow/steps/*/**/*.ts'], rules: stepsOnTheSdk('') },
  { files: ['src/workflow/steps/save/**/*.ts'], rules: stepsOnTheSdk('|sdk/run-write-handle$') },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'src/database/migrations/**', '*.mjs', '*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...infrastructureImportsNoFeature,
  ...noOtherFeaturesRepository,
  ...stepsImportTheSdk,
);
