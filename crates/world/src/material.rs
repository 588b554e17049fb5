//! Materials: how a surface reflects a laser (Phong: diffuse, specular, exponent) and what
//! colour a camera sees.

/// Index of a material in a [`MaterialTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MaterialId(pub u16);

/// What a surface is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// Its name (lower case, as tables and TOML files name it).
    pub name: String,
    /// Diffuse (Lambertian) coefficient, 0..1.
    pub kd: f64,
    /// Specular coefficient, 0..1.
    pub ks: f64,
    /// Specular exponent.
    pub alpha: f64,
    /// Colour seen by a camera in full light, sRGB.
    pub rgb: [u8; 3],
}

/// The materials of a world, by [`MaterialId`].
#[derive(Debug, Clone, PartialEq)]
pub struct MaterialTable {
    materials: Vec<Material>,
}

/// The standard table: (name, kd, ks, alpha, rgb). The first nine share the virtual survey's
/// values (sim's `Material::reflectance`), so a sensor sees the survey's contrasts.
const STANDARD: [(&str, f64, f64, f64, [u8; 3]); 12] = [
    ("asphalt", 0.12, 0.02, 4.0, [70, 70, 72]),
    ("paint", 0.75, 0.40, 20.0, [235, 235, 225]),
    ("setts", 0.25, 0.05, 8.0, [120, 112, 105]),
    ("steel", 0.30, 0.40, 30.0, [150, 152, 155]),
    ("concrete", 0.35, 0.03, 4.0, [170, 168, 160]),
    ("foliage", 0.45, 0.0, 1.0, [60, 110, 45]),
    ("car paint", 0.20, 0.60, 50.0, [160, 30, 35]),
    ("gravel", 0.14, 0.0, 1.0, [110, 100, 85]),
    ("cloth", 0.30, 0.02, 2.0, [60, 70, 110]),
    ("cast iron", 0.08, 0.50, 40.0, [55, 55, 58]),
    ("glass", 0.05, 0.90, 200.0, [120, 150, 170]),
    ("facade", 0.40, 0.05, 4.0, [190, 170, 150]),
];

impl Default for MaterialTable {
    fn default() -> Self {
        MaterialTable::standard()
    }
}

impl MaterialTable {
    /// The standard materials: asphalt, paint, setts, steel, concrete, foliage, car paint,
    /// gravel, cloth, cast iron, glass, facade (ids in this order, from 0).
    pub fn standard() -> MaterialTable {
        let materials = STANDARD
            .iter()
            .map(|(name, kd, ks, alpha, rgb)| Material {
                name: (*name).into(),
                kd: *kd,
                ks: *ks,
                alpha: *alpha,
                rgb: *rgb,
            })
            .collect();
        MaterialTable { materials }
    }
    /// The material `id` (the first one for an id the table does not have).
    pub fn get(&self, id: MaterialId) -> &Material {
        self.materials.get(id.0 as usize).unwrap_or(&self.materials[0])
    }
    /// The id of the material named `name`.
    pub fn id(&self, name: &str) -> Option<MaterialId> {
        self.materials.iter().position(|m| m.name == name).map(|i| MaterialId(i as u16))
    }
    /// The id of `name`, or asphalt's (id 0) when the table has no such material.
    pub fn id_or_first(&self, name: &str) -> MaterialId {
        self.id(name).unwrap_or_default()
    }
    /// Replaces the material of the same name, or adds it; returns its id (None when the
    /// table is full).
    pub fn set(&mut self, m: Material) -> Option<MaterialId> {
        if let Some(i) = self.materials.iter().position(|x| x.name == m.name) {
            self.materials[i] = m;
            return Some(MaterialId(i as u16));
        }
        let id = u16::try_from(self.materials.len()).ok()?;
        self.materials.push(m);
        Some(MaterialId(id))
    }
    /// All materials, by id.
    pub fn all(&self) -> &[Material] {
        &self.materials
    }
}

/// What a surface is: material, class and object (the same for a whole part or a range of
/// its triangles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tag {
    /// Material.
    pub material: MaterialId,
    /// Class (ASPRS codes: 2 ground, 11 road surface, 5 high vegetation, 6 building, ...).
    pub class: u8,
    /// Object id (0 = the static scene).
    pub object: u32,
}
