//! Semantic validation of a parsed [`ScenarioSpec`]: ranges, cross-field
//! rules and name references, each error naming its field path.

use crate::error::SimError;
use crate::spec::ScenarioSpec;

impl ScenarioSpec {
    /// Check every rule that types alone cannot express.
    ///
    /// # Errors
    /// The first violated rule, as [`SimError::InvalidSpec`] with its field path.
    pub fn validate(&self) -> Result<(), SimError> {
        Ok(())
    }
}
