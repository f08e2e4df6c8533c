import Foundation

// Apple's Core Data error codes (CoreDataErrors.h), all in NSCocoaErrorDomain, so that existing
// `catch let error as NSError where error.code == NSValidationMissingMandatoryPropertyError`
// code keeps working. Values are Apple's.

/// Generic validation error.
public let NSManagedObjectValidationError = 1550
/// A constraint validation failure.
public let NSManagedObjectConstraintValidationError = 1551
/// Several validation errors; the individual errors are under `NSDetailedErrorsKey`.
public let NSValidationMultipleErrorsError = 1560
/// A non-optional property has no value.
public let NSValidationMissingMandatoryPropertyError = 1570
/// A to-many relationship has fewer objects than its `minCount`.
public let NSValidationRelationshipLacksMinimumCountError = 1580
/// A to-many relationship has more objects than its `maxCount`.
public let NSValidationRelationshipExceedsMaximumCountError = 1590
/// A deny delete rule stopped a delete.
public let NSValidationRelationshipDeniedDeleteError = 1600
/// A number is larger than the attribute's maximum.
public let NSValidationNumberTooLargeError = 1610
/// A number is smaller than the attribute's minimum.
public let NSValidationNumberTooSmallError = 1620
/// A date is later than the attribute's maximum.
public let NSValidationDateTooLateError = 1630
/// A date is earlier than the attribute's minimum.
public let NSValidationDateTooSoonError = 1640
/// A value does not fit the attribute's type.
public let NSValidationInvalidDateError = 1650
/// A string is longer than the attribute's maximum length.
public let NSValidationStringTooLongError = 1660
/// A string is shorter than the attribute's minimum length.
public let NSValidationStringTooShortError = 1670
/// A string does not match the attribute's regular expression.
public let NSValidationStringPatternMatchingError = 1680
/// A value does not fit the attribute's type (Apple's 1690, `NSValidationInvalidURIError` range).
public let NSValidationInvalidURIError = 1690

/// An object was fetched or faulted from a context that no longer has it.
public let NSManagedObjectContextLockingError = 132000
/// The coordinator could not be locked.
public let NSPersistentStoreCoordinatorLockingError = 132010
/// A fault could not be fulfilled because its row was deleted.
public let NSManagedObjectReferentialIntegrityError = 133000
/// An object was used in a context it does not belong to.
public let NSManagedObjectExternalRelationshipError = 133010
/// An optimistic locking conflict; the conflicts are under `conflictList`.
public let NSManagedObjectMergeError = 133020
/// A uniqueness constraint conflict.
public let NSManagedObjectConstraintMergeError = 133021

/// Unclassified persistent store error.
public let NSPersistentStoreInvalidTypeError = 134000
/// The store type does not match the file.
public let NSPersistentStoreTypeMismatchError = 134010
/// The store does not support an operation, or an object's entity is in no store.
public let NSPersistentStoreIncompatibleSchemaError = 134020
/// Saving to the store failed.
public let NSPersistentStoreSaveError = 134030
/// The store could not be opened or was not found.
public let NSPersistentStoreIncompleteSaveError = 134040
/// Saving conflicts with a change another coordinator made.
public let NSPersistentStoreSaveConflictsError = 134050
/// Generic persistent store operation error.
public let NSCoreDataError = 134060
/// A store operation failed.
public let NSPersistentStoreOperationError = 134070
/// The store could not be opened.
public let NSPersistentStoreOpenError = 134080
/// The store did not time out.
public let NSPersistentStoreTimeoutError = 134090
/// The store's entity version hashes differ from the model's.
public let NSPersistentStoreIncompatibleVersionHashError = 134100
/// A migration failed (a value did not convert, a validation failed, a file could not be replaced).
public let NSMigrationError = 134110
/// A migration was cancelled.
public let NSMigrationCancelledError = 134120
/// The source store of a migration does not match its source model.
public let NSMigrationMissingSourceModelError = 134130
/// No mapping model was found for a migration.
public let NSMigrationMissingMappingModelError = 134140
/// The migration manager's source store could not be opened.
public let NSMigrationManagerSourceStoreError = 134150
/// The migration manager's destination store could not be made.
public let NSMigrationManagerDestinationStoreError = 134160
/// An entity migration policy failed.
public let NSEntityMigrationPolicyError = 134170
/// No mapping model could be inferred: the models differ in a way lightweight migration cannot map.
public let NSInferredMappingModelError = 134190
/// The store file is not a valid store.
public let NSPersistentStoreInvalidFileError = 259

/// userInfo key: the object that failed validation.
public let NSValidationObjectErrorKey = "NSValidationErrorObject"
/// userInfo key: the key that failed validation.
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
/// userInfo key: the predicate that failed validation.
public let NSValidationPredicateErrorKey = "NSValidationErrorPredicate"
/// userInfo key: the value that failed validation.
public let NSValidationValueErrorKey = "NSValidationErrorValue"
/// userInfo key: the individual errors of an `NSValidationMultipleErrorsError`.
public let NSDetailedErrorsKey = "NSDetailedErrors"
/// userInfo key: the persistent store an error concerns.
public let NSAffectedStoresErrorKey = "NSAffectedStoresErrorKey"
/// userInfo key: the objects an error concerns.
public let NSAffectedObjectsErrorKey = "NSAffectedObjectsErrorKey"
/// userInfo key of a merge error: the `NSMergeConflict`s.
public let NSPersistentStoreSaveConflictsErrorKey = "conflictList"

/// Builds an `NSError` in `NSCocoaErrorDomain` with a readable description.
func coreDataError(_ code: Int, _ description: String, _ userInfo: [String: Any] = [:]) -> NSError {
    var info = userInfo
    info[NSLocalizedDescriptionKey] = description
    return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: info)
}
