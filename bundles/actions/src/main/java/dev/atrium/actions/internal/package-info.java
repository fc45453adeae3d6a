/** Actions: workflows of repositories run as jobs in containers. */
package dev.atrium.actions.internal;
