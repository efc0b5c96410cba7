extension ResourceModel {
    /// What the server refused in the last ``create(in:id:uploadProgress:)`` or ``save(uploadProgress:)``,
    /// per field; empty once a create or save succeeds (ApiModel's `form.errors`, Ember's
    /// `model.errors`).
    ///
    /// ```swift
    /// do {
    ///     try await post.save()
    /// } catch let error as APIError where error.code == .validationFailed {
    ///     post.errors["contents"]   // ["must be longer than 140 characters"]
    ///     post.errorMessages        // ["Contents must be longer than 140 characters"]
    /// }
    /// ```
    ///
    /// The same errors are on the thrown ``/MonoRailClient/APIError/errors``. Observation tracks this property like a
    /// field, so a form shows the messages as they arrive.
    public var errors: ValidationErrors { _$state.errors(of: self) }

    /// Whether the last create or save was refused with validation errors.
    public var hasErrors: Bool { !errors.isEmpty }

    /// The messages of ``errors`` as sentences: `"Contents must be longer than 140 characters"`.
    public var errorMessages: [String] { errors.fullMessages }
}
