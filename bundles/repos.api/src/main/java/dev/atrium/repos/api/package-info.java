/**
 * What other bundles (Git smart HTTP, federation, app deployments) may know of repositories: find one by
 * workspace and name, where it lives on disk, the push lock, the rules for ref names and objects that enter
 * one, and the EventAdmin topics repositories publish.
 */
@org.osgi.annotation.versioning.Version("1.6.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.repos.api;
