//! Why a world could not be made.

/// Why a part of a world could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A CRG grid too small to hold a cell.
    #[error("the CRG grid has {nu} x {nv} nodes; a surface needs at least 2 x 2")]
    GridTooSmall {
        /// Cross sections.
        nu: usize,
        /// Long sections.
        nv: usize,
    },
    /// A CRG grid with more long sections than a heightfield can index.
    #[error("the CRG grid has {nv} long sections; a heightfield takes at most {max}")]
    GridTooWide {
        /// Long sections.
        nv: usize,
        /// The most it takes.
        max: usize,
    },
    /// A `<surface><CRG>` mode the world cannot lay on its road.
    #[error("CRG mode \"{mode}\" is not supported (attached and attached0 are)")]
    Mode {
        /// The mode as written.
        mode: String,
    },
    /// A `<surface><CRG>` record whose numbers cannot place the grid.
    #[error("CRG link {what} is {value}, which cannot place the grid")]
    Link {
        /// The attribute.
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// A mesh whose triangle names a vertex it does not have.
    #[error("triangle {triangle} names vertex {vertex}, but the mesh has {vertices} vertices")]
    Vertex {
        /// Triangle index.
        triangle: usize,
        /// The vertex index it names.
        vertex: u32,
        /// Vertices in the mesh.
        vertices: usize,
    },
    /// A mesh whose triangle names a tag it does not have.
    #[error("triangle {triangle} names tag {tag}, but the mesh has {tags} tags")]
    Tag {
        /// Triangle index.
        triangle: usize,
        /// The tag index.
        tag: u32,
        /// Tags in the mesh.
        tags: usize,
    },
}
