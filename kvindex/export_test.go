package kvindex

// BaseQualifier is baseQualifier, for the tests that plant base-set cells.
var BaseQualifier = baseQualifier
