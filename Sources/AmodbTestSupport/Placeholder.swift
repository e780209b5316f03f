public enum AmodbTestSupportPlaceholder {}
