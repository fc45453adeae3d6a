/**
 * The workflow model of Atrium Actions: a workflow file (GitHub/Gitea Actions syntax, the supported subset) parsed
 * into immutable records, validated on the way; whatever is not supported is refused with its key and line, never
 * skipped. Also the expression language ({@link dev.atrium.actions.internal.workflow.Expressions}), matrix
 * expansion, trigger filters and the job graph. docs/actions-compatibility.md lists every key.
 */
package dev.atrium.actions.internal.workflow;
