// typescript-eslint's strict and stylistic type-checked rules over src/ (issue 38), in npm test after the
// Prettier check. Each rule turned off or relaxed below says why. test/, scripts/ and bench/ are not linted:
// Prettier formats them and tsc (noUnusedLocals) checks test/; even an untyped pass over them would add a
// quarter to lint's time. The program is src/ alone (tsconfig.lint.json), not test/, to keep the pass short.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // sha256x4-module.ts is generated (the WebAssembly module as bytes), as Prettier's ignore list says too.
  { ignores: ['dist/**', 'coverage/**', '.venv/**', 'node_modules/**', 'src/canonical/sha256x4-module.ts'] },
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.strictTypeChecked, tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: {
        // src/page is compiled against the DOM by its own tsconfig.page.json; the rest by tsconfig.json's options.
        project: ['./tsconfig.lint.json', './tsconfig.page.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Numbers read plainly in messages (`seq ${n}`); objects, nullish values and unions with them stay errors.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // noUncheckedIndexedAccess types every `xs[i]` as possibly undefined; after a bounds check or a regex
      // match the code asserts with `!` rather than add a branch that cannot run (and that tests cannot reach).
      '@typescript-eslint/no-non-null-assertion': 'off',
      // A no-op arrow is how the code ignores a rejection or fills an optional hook; a name would not say more.
      '@typescript-eslint/no-empty-function': 'off',
      // Interface methods (a store's, a hook's) are async so that every failure is a rejection, never a
      // synchronous throw; dropping `async` where there is no `await` would change that.
      '@typescript-eslint/require-await': 'off',
      // `() => void f()` is noise in one-line callbacks, and `return bad(why)` in a void function ends it plainly;
      // a void call used as a value anywhere else is still flagged.
      '@typescript-eslint/no-confusing-void-expression': [
        'error',
        { ignoreArrowShorthand: true, ignoreVoidReturningFunctions: true },
      ],
      // Hashed preimages are built with `text + seq` on the hot path; strings and numbers may mix, nothing else.
      '@typescript-eslint/restrict-plus-operands': ['error', { allowNumberAndString: true }],
      // Messages about malformed input render whatever arrived with String(); '[object Object]' is an honest
      // rendering of a member that should have been a string, and the declared types there are optimistic.
      '@typescript-eslint/no-base-to-string': 'off',
      // The same optimism: String()/Number() around values read from untrusted bytes stay, whatever the
      // declared type says, so a message or a comparison never depends on the producer having kept to it.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      // Verifiers check hostile input whose static type claims more than the bytes guarantee (JSON cast to
      // record types, options from JavaScript callers); a check this rule calls unnecessary is the one that
      // holds when the type lies. Re-typing those values as unknown is the fix; until then the checks stay.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // An explicit `=== null` test, a ternary, or `||` on strings (where '' must fall through too) says what
      // the code means; `??` would only be shorter, or would keep the empty string.
      '@typescript-eslint/prefer-nullish-coalescing': [
        'error',
        { ignoreIfStatements: true, ignoreTernaryTests: true, ignorePrimitives: { string: true } },
      ],
      // Every hit was a destructured module function (node:path) or a bag of closures; the one method passed
      // around unbound (RunStateCache.write) is typed as a function member instead.
      '@typescript-eslint/unbound-method': 'off',
      // Records, policies and arbitraries are plain JSON maps keyed by data: deleting a member by name is the
      // operation (erasure), not a misused Map.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // Its one hit is the page's byId<T>(), the getElementById cast idiom: the caller names the element type
      // it wrote in page.html.
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
      // An abort rejects with signal.reason, as the platform's own APIs do; whatever the caller aborted with.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // The chain, receipt and canonical scanners throw small non-Error values as control flow (no stack to
      // capture on a hot path) and catch them a few frames up; everything else throws Errors.
      '@typescript-eslint/only-throw-error': [
        'error',
        { allow: [{ from: 'file', name: ['FatalProblem', 'Abort', 'Replace'] }] },
      ],
    },
  },
  {
    // No call spreads in the receipt and diff code (issue 15 item 2): `f(...xs)` puts every element on the
    // stack, and an unbounded array (400 000 lines, a hostile archive's entries) throws a RangeError. Array
    // literals (`[...a, ...b]`) and rest parameters are not calls and stay allowed.
    files: ['src/receipt/**/*.ts', 'src/diff/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression > SpreadElement, NewExpression > SpreadElement',
          message: 'No call spread here: an unbounded array overflows the stack. Loop, or pass the array.',
        },
      ],
    },
  },
);
