/**
 * Vector search on Apache Lucene's HNSW graphs, shared by the capabilities that search vectors (vectorize resources,
 * workspace and repository search): Lucene's own vector formats written and read with SIMD float and int8 scorers
 * ({@link dev.atrium.vector.AtriumHnswVectorsFormat}, {@link dev.atrium.vector.AtriumHnswQuantizedVectorsFormat}), a
 * k-NN query that scans an int8 segment in file order where walking its graph would cost more
 * ({@link dev.atrium.vector.ScanOrWalkKnnQuery}, {@link dev.atrium.vector.FlatScanRule}), and
 * {@link dev.atrium.vector.VectorSearch}: a codec with these formats and the exact re-scoring of int8 candidates.
 * The bundle exports Lucene's packages too, at Lucene's version.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.vector;
