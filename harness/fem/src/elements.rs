//! A borrowed view of a mesh's connectivity, element-major, that coloring and partitioning work
//! on whatever the element type: triangles of any order, prisms, hexahedra.

/// Element e's nodes are `nodes[e * per_element..(e + 1) * per_element]`; the first `corners`
/// of them are its vertices (conforming meshes: elements that share any node share a vertex).
#[derive(Debug, Clone, Copy)]
pub struct Elements<'a> {
    pub nodes: &'a [u32],
    pub per_element: usize,
    pub corners: usize,
    pub num_nodes: usize,
}

impl<'a> Elements<'a> {
    pub fn len(&self) -> usize {
        self.nodes.len() / self.per_element.max(1)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn element(&self, e: usize) -> &'a [u32] {
        &self.nodes[e * self.per_element..(e + 1) * self.per_element]
    }
    pub fn corners_of(&self, e: usize) -> &'a [u32] {
        &self.element(e)[..self.corners]
    }
}
