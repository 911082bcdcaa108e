// Lint for the whole tree: typescript-eslint's recommended rules (syntax-only: type-aware rules would need a
// TypeScript program per run, too slow for the test step) and the import directions that keep the layers apart.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/** A `no-restricted-imports` rule refusing imports whose specifier matches one of `regexes`. */
const refuse = (message, ...regexes) => ['error', { patterns: regexes.map((regex) => ({ regex, message })) }];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/build/**',
      '**/coverage/**',
      'web/e2e/.output/**',
      'bench/results/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // TypeScript reports undefined names itself; for the plain .js/.mjs scripts this would need a globals list
      'no-undef': 'off',
      // `any` is used at the JSON edges (request bodies, upstream responses) on purpose; typing them all is a rewrite
      '@typescript-eslint/no-explicit-any': 'off',
      // the HTTP parsers and validators match control characters on purpose
      'no-control-regex': 'off',
      // a server's handlers may read a `let` that is assigned once the server is listening
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },

  {
    // only the two classic hook rules: the plugin's React Compiler rules would ask for rewrites across the console
    files: ['web/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'warn',
    },
  },

  // ---- import directions: each layer points one way (docs/architecture.md)
  {
    files: ['server/src/lib/**'],
    rules: {
      'no-restricted-imports': refuse(
        'lib/ holds generic helpers and imports nothing of the business (services, relay, api, db, the app context or config)',
        '^(\\.\\./)+(services|relay|api|db)/',
        '^(\\.\\./)+(context|config|app|index|shutdown)\\.js$',
      ),
    },
  },
  {
    // One exception: the providers' channel facts (relay/providers/channel-facts.ts), so that channel management
    // validates a save by the rules of the provider that will relay it instead of keeping a copy of them. The facts
    // are leaves (the rule below), so this import brings nothing of the relay's core into services/.
    files: ['server/src/services/**'],
    rules: {
      'no-restricted-imports': refuse(
        'services/ must not import the console (api/) or the relay (only the channel facts registry)',
        '^(\\.\\./)+api/',
        '^(\\.\\./)+relay/(?!providers/channel-facts\\.js$)',
      ),
    },
  },
  {
    files: ['server/src/relay/**'],
    rules: {
      'no-restricted-imports': refuse(
        'the relay must not import the console (api/): shared code lives in services/',
        '^(\\.\\./)+api/',
      ),
    },
  },
  {
    // the hub is the common form every format and provider meets at: it imports none of them, so either side can change
    files: ['server/src/relay/hub/**'],
    rules: {
      'no-restricted-imports': refuse(
        'relay/hub/ is the core of the relay: it imports no format, mode, provider or relay step',
        '^(\\.\\./)+api/',
        '^\\.\\./(formats|modes|providers|pipeline|stream|transport|endpoints)/',
        '^\\.\\./[^/]+\\.js$',
      ),
    },
  },
  {
    // a wire format's codec speaks the hub and its own wire; providers use formats, never the reverse
    files: ['server/src/relay/formats/**'],
    rules: {
      'no-restricted-imports': refuse(
        'relay/formats/ converts between a wire format and the hub: it imports no provider, mode or relay step',
        '^(\\.\\./)+api/',
        '^(\\.\\./)+(providers|modes|pipeline|transport|endpoints)/',
      ),
    },
  },
  {
    files: ['server/src/relay/providers/**'],
    rules: {
      'no-restricted-imports': refuse(
        'a provider receives a plain channel value and its settings (providers/types.ts), not the cache or the app context',
        '^(\\.\\./)+api/',
        '^(\\.\\./)+services/cache/',
        '^(\\.\\./)+(context|config)\\.js$',
      ),
    },
  },
  // The channel facts and the parsers they reuse are leaves: services/ imports them (see above), so they must not pull
  // in the relay's core, the services, the database or the app context, nor a provider's adaptor (index.ts), which
  // does. The registry imports the providers' channel.ts; those import the contract and their own folder's parsers.
  {
    files: ['server/src/relay/providers/channel-facts*.ts'],
    rules: {
      'no-restricted-imports': refuse(
        "the channel facts registry is a leaf: it imports only the providers' channel.ts and the facts contract",
        '^\\.\\./',
        '^(?!\\.)',
        '(^|/)index\\.js$',
      ),
    },
  },
  {
    files: [
      'server/src/relay/providers/*/channel.ts',
      'server/src/relay/providers/openai/balance.ts',
      'server/src/relay/providers/bedrock/credentials.ts',
      'server/src/relay/providers/bedrock/models.ts',
      'server/src/relay/providers/vertex/credentials.ts',
      'server/src/relay/providers/vertex/region.ts',
    ],
    rules: {
      'no-restricted-imports': refuse(
        "channel facts are leaves: they import only the facts contract and their own folder's parsers",
        '^\\.\\./(?!channel-facts-contract\\.js$)',
        '^(?!\\.)',
        '(^|/)index\\.js$',
      ),
    },
  },
  {
    // the attempt's dispatcher and its lanes name no vendor and no framing: they reach providers, formats and
    // framings through their registries and interfaces
    files: ['server/src/relay/attempt.ts', 'server/src/relay/lanes/**'],
    rules: {
      'no-restricted-imports': refuse(
        'the lanes see providers, formats and framings through providers/index, formats/index and the stream pump and its lanes, never the pipeline',
        '^(\\.\\./)+api/',
        '^\\.{1,2}/providers/[^/]+/',
        '^\\.{1,2}/formats/[^/]+/',
        '^\\.{1,2}/stream/(?!(framing|pump|sse-scan|translate)\\.js$)',
        '^\\.{1,2}/pipeline/',
      ),
    },
  },
  {
    files: ['web/src/**'],
    rules: {
      'no-restricted-imports': refuse('the console talks to the server over HTTP only', '(^|/)server/'),
    },
  },
  {
    // Pages read and write server state through TanStack Query (docs/architecture.md): a call of the console's api
    // client (`api.get/post/put/del`, `apiFetch`) must sit inside a `queryFn` or `mutationFn`, so every request has
    // a query key to cache under and every change an invalidation, instead of useEffect + setState plumbing.
    files: ['web/src/pages/**/*.{ts,tsx}'],
    ignores: ['web/src/**/*.test.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.object.name='api']:not(Property[key.name=/^(queryFn|mutationFn)$/] CallExpression)",
          message: 'a page calls the api client only inside a useQuery queryFn or a useMutation mutationFn',
        },
        {
          selector:
            "CallExpression[callee.name='apiFetch']:not(Property[key.name=/^(queryFn|mutationFn)$/] CallExpression)",
          message: 'a page calls apiFetch only inside a useQuery queryFn or a useMutation mutationFn',
        },
      ],
    },
  },
  {
    files: ['web/src/lib/**'],
    rules: {
      'no-restricted-imports': refuse(
        'web/src/lib holds helpers the pages use; it must not import pages, components or contexts',
        '(^|/)(server|pages|components|context)/',
      ),
    },
  },
);
