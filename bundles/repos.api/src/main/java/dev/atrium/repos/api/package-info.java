/**
 * What other bundles (Git smart HTTP, federation, app deployments) may know of repositories: find one by
 * workspace and name, where it lives on disk, the push lock, the rules for ref names and objects that enter
 * one, the EventAdmin topics repositories publish, and a fetch of a repository's upstream ({@link
 * dev.atrium.repos.api.UpstreamFetch}).
 */
@org.osgi.annotation.versioning.Version("1.8.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.repos.api;
