// A Stryker ignorer (stryker.config.mjs, `ignorers: ['message-text']`): no mutants in the prose of a coded
// report. Messages and hints are informative — the spec and the vectors fix codes, locations and order,
// never wording — so a mutant that blanks one tells nothing about the tests. What counts as prose here:
// - a string or template that is the second or a later argument of a call or `new` whose first argument
//   is an error code (a literal such as 'MALFORMED_LINE', or a variable named code): report('CODE',
//   message, …), new XError(code, message, …);
// - the second or a later element of a `[code, message, …]` tuple, an array literal whose first element is
//   an error-code literal (`return ['PROOF_INVALID', message]`, `fail(['CODE', message])`), unless that
//   element is itself a code (`['FIELD_INVALID', 'UNSUPPORTED_VERSION']` is a list of codes);
// - the first argument of a call to `soft` (the scanner's non-canonical reason) or to `sourceInvalid`
//   (redact/rechain.ts: its only argument is the message of a SOURCE_INVALID error);
// - the second argument of a three-argument call to `envelope` (redact's EnvelopeCheck: value, `what`,
//   location; `what` names the member for the message only, the location object says where);
// - the value of a member named message, hint or reason;
// and, for each, the strings joined into it with `+`, `? :` or `??`.
// A code string itself, a name, a format string or a JSON Pointer (a location: '/anchor/length', the third
// argument of redact/verify.ts's problem calls) is never ignored.
const CODE = /^[A-Z][A-Z0-9_]+$/;

/**
 * A sibling the instrumenter has already visited comes back wrapped in its own mutant switch,
 * `stryMutAct_…(id) ? mutant : (stryCov_…(id), original)`: this digs the original out.
 */
function original(node) {
  for (;;) {
    if (
      node?.type === 'ConditionalExpression' &&
      node.test.type === 'CallExpression' &&
      /^stryMutAct/.test(node.test.callee.name ?? '')
    )
      node = node.alternate;
    else if (node?.type === 'SequenceExpression') node = node.expressions[node.expressions.length - 1];
    else if (node?.type === 'ParenthesizedExpression') node = node.expression;
    else return node;
  }
}
const PROSE_MEMBERS = new Set(['message', 'hint', 'reason']);

function shouldIgnore(path) {
  if (!(path.isStringLiteral() || path.isTemplateLiteral())) return undefined;
  if (path.isStringLiteral() && path.node.value.startsWith('/')) return undefined; // a location
  let at = path;
  while (
    at.parentPath &&
    ((at.parentPath.isBinaryExpression() && at.parentPath.node.operator === '+') ||
      (at.parentPath.isConditionalExpression() && at.key !== 'test') ||
      (at.parentPath.isLogicalExpression() && at.parentPath.node.operator === '??'))
  ) {
    at = at.parentPath;
  }
  const parent = at.parentPath;
  if (!parent) return undefined;
  if (parent.isObjectProperty() && at.key === 'value') {
    const key = parent.node.key;
    const name = key.type === 'Identifier' ? key.name : key.type === 'StringLiteral' ? key.value : undefined;
    if (PROSE_MEMBERS.has(name)) return 'message text (informative; codes and locations are what the spec fixes)';
  }
  if (parent.isArrayExpression() && at.listKey === 'elements' && at.key >= 1) {
    const first = original(parent.node.elements[0]);
    const self = original(at.node);
    const isCode = self?.type === 'StringLiteral' && CODE.test(self.value);
    if (first?.type === 'StringLiteral' && CODE.test(first.value) && !isCode) {
      return 'message text of a [code, message] tuple (informative; codes and locations are what the spec fixes)';
    }
  }
  if ((parent.isCallExpression() || parent.isNewExpression()) && at.listKey === 'arguments') {
    const first = original(parent.node.arguments[0]);
    const coded =
      (first?.type === 'StringLiteral' && CODE.test(first.value)) ||
      (first?.type === 'Identifier' && first.name === 'code');
    if (at.key >= 1 && coded) {
      return 'message text of a coded report (informative; codes and locations are what the spec fixes)';
    }
    const callee = parent.node.callee;
    const calleeName =
      callee.type === 'Identifier'
        ? callee.name
        : callee.type === 'MemberExpression' && callee.property.type === 'Identifier'
          ? callee.property.name
          : undefined;
    if (at.key === 0 && calleeName === 'soft') return 'the reason of a non-canonical form (informative)';
    if (at.key === 0 && calleeName === 'sourceInvalid') return 'message text of a SOURCE_INVALID error (informative)';
    if (at.key === 1 && calleeName === 'envelope' && parent.node.arguments.length === 3) {
      return 'the member an envelope check names in its message (informative; the location object says where)';
    }
  }
  return undefined;
}

export const strykerPlugins = [{ kind: 'Ignore', name: 'message-text', value: { shouldIgnore } }];
