C     A value kept within 0 and 1: run on each process's own data.
      PURE EXTRINSIC (HPF_LOCAL) REAL FUNCTION CLIP(X)
      REAL X
      INTENT(IN) X
      CLIP = MIN(MAX(X, 0.0), 1.0)
      END
