public enum AmodbClientPlaceholder {}
