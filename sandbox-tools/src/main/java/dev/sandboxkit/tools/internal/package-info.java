/**
 * Implementation of the tool set. Not an API: nothing here is supported for use outside sandboxkit, and it
 * changes without notice.
 */
package dev.sandboxkit.tools.internal;
